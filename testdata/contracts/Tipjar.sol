// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Tipjar
/// @notice A contract whose effect differs between simulation and inclusion,
/// for walletgate's tests. tip(token) pulls a small tip from the caller
/// (through an existing allowance) when the transaction pays no gas price — as
/// in a simulation — and three times as much when it runs for real.
contract Tipjar {
    address public immutable sink;
    uint256 public immutable small;

    constructor(address sink_, uint256 small_) {
        sink = sink_;
        small = small_;
    }

    function tip(address token) external {
        uint256 amount = tx.gasprice == 0 ? small : 3 * small;
        (bool ok, ) = token.call(abi.encodeWithSelector(0x23b872dd, msg.sender, sink, amount));
        require(ok, "Tipjar: pull failed");
    }
}
