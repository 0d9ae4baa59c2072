// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title QuirkyToken
/// @notice An ERC-20 whose owner can make it misbehave in the two ways walletgate must
/// report truthfully after a broadcast:
/// - a transfer fee (`setFeeBps`): the recipient receives less than the amount sent and the
///   logs say so (a fee-on-transfer token). The transaction succeeds, but the exact Transfer
///   walletgate previewed is not in the receipt: EFFECT_MISMATCH.
/// - odd blocks (`setOddBlocksRevert`): every transfer reverts in a block with an odd number.
///   eth_call at "latest" runs in the latest block's context, so with an even head the
///   confirm's re-simulation passes while the transaction, included in the next (odd) block,
///   reverts on chain: REVERTED.
/// - under-logging (`setUnderLog`): a transfer moves the whole amount and its Transfer log
///   says half: what left the wallet is only seen in its balance.
/// Test-only; never deployed by the dev chain itself.
contract QuirkyToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    address public immutable owner;

    uint256 public totalSupply;
    uint256 public feeBps;
    bool public oddBlocksRevert;
    bool public underLog;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    modifier onlyOwner() {
        require(msg.sender == owner, "QuirkyToken: caller is not the owner");
        _;
    }

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        owner = msg.sender;
        totalSupply = initialSupply;
        balanceOf[msg.sender] = initialSupply;
        emit Transfer(address(0), msg.sender, initialSupply);
    }

    function setFeeBps(uint256 bps) external onlyOwner {
        require(bps <= 10000, "QuirkyToken: fee above 100%");
        feeBps = bps;
    }

    function setOddBlocksRevert(bool on) external onlyOwner {
        oddBlocksRevert = on;
    }

    function setUnderLog(bool on) external onlyOwner {
        underLog = on;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 current = allowance[from][msg.sender];
        require(current >= value, "ERC20: insufficient allowance");
        unchecked {
            allowance[from][msg.sender] = current - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) private {
        require(!(oddBlocksRevert && block.number % 2 == 1), "QuirkyToken: odd block");
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 fromBalance = balanceOf[from];
        require(fromBalance >= value, "ERC20: transfer amount exceeds balance");
        uint256 fee = (value * feeBps) / 10000;
        unchecked {
            balanceOf[from] = fromBalance - value;
            balanceOf[to] += value - fee;
            balanceOf[owner] += fee;
        }
        emit Transfer(from, to, underLog ? (value - fee) / 2 : value - fee);
        if (fee > 0) {
            emit Transfer(from, owner, fee);
        }
    }
}
