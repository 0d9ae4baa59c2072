// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Mirage
/// @notice A contract whose calls look fine in a simulation (which pays no gas
/// price) and do otherwise for real, for walletgate's tests of what a plan
/// measurably moved:
/// - poke() succeeds only in a simulation: as a later call of a plan it passes
///   the preview and the confirm's re-simulation, then fails once the earlier
///   calls landed (the plan stops part way);
/// - pay(token, amount) pays the caller amount of token from its own balance in a
///   simulation, and nothing for real (an inflow previewed and never received).
contract Mirage {
    function poke() external view {
        require(tx.gasprice == 0, "Mirage: only in a simulation");
    }

    function pay(address token, uint256 amount) external {
        if (tx.gasprice != 0) {
            return;
        }
        (bool ok, ) = token.call(abi.encodeWithSelector(0xa9059cbb, msg.sender, amount));
        require(ok, "Mirage: pay failed");
    }
}
