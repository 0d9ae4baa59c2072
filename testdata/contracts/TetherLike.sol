// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title TetherLike
/// @notice Test double of mainnet USDT (TetherToken, 0xdAC17F958D2ee523a2206206994597C13D831ec7).
/// It reproduces the quirks that break naive ERC-20 clients, so walletgate's tests
/// exercise them against real bytecode:
///   - transfer / transferFrom / approve return NOTHING (mainnet USDT predates the
///     bool-return convention); a caller decoding a bool gets empty return data.
///   - approve from a non-zero allowance to another non-zero allowance reverts
///     (USDT's mitigation of the approve front-running race); reset to 0 first.
///   - an allowance of type(uint256).max is never decremented by transferFrom.
///   - calls with truncated calldata revert with empty data (mainnet: onlyPayloadSize;
///     here: Solidity 0.8's ABI decoder, so no explicit modifier is needed).
///   - transfers to the zero address are NOT rejected (mainnet doesn't check).
/// Deliberate differences from mainnet, for test ergonomics: insufficient
/// balance/allowance reverts with a reason string (mainnet's SafeMath hits an
/// assert instead), there is no fee/pause/blacklist logic, decimals() is declared
/// uint8 (mainnet declares uint256; the returned 32-byte word is identical), and
/// minting emits Transfer(address(0), to, amount) (mainnet's issue() emits Issue).
contract TetherLike {
    string public name = "Tether USD (walletgate dev)";
    string public symbol = "USDT";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 private _totalSupply;
    mapping(address => uint256) private _balances;
    mapping(address => mapping(address => uint256)) private _allowed;

    uint256 private constant MAX_UINT = type(uint256).max;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    modifier onlyOwner() {
        require(msg.sender == owner, "TetherLike: caller is not the owner");
        _;
    }

    constructor(uint256 initialSupply) {
        owner = msg.sender;
        _mint(msg.sender, initialSupply);
    }

    function totalSupply() public view returns (uint256) {
        return _totalSupply;
    }

    function balanceOf(address who) public view returns (uint256) {
        return _balances[who];
    }

    function allowance(address tokenOwner, address spender) public view returns (uint256) {
        return _allowed[tokenOwner][spender];
    }

    /// No return value, exactly like mainnet USDT.
    function transfer(address to, uint256 value) public {
        _move(msg.sender, to, value);
    }

    /// No return value, exactly like mainnet USDT.
    function transferFrom(address from, address to, uint256 value) public {
        uint256 current = _allowed[from][msg.sender];
        require(current >= value, "TetherLike: insufficient allowance");
        // Mainnet USDT treats MAX_UINT as an infinite allowance and never decrements it.
        if (current < MAX_UINT) {
            unchecked {
                _allowed[from][msg.sender] = current - value;
            }
        }
        _move(from, to, value);
    }

    /// No return value, exactly like mainnet USDT. Changing a non-zero allowance
    /// to another non-zero value reverts: the caller must approve(spender, 0) first.
    /// The revert carries no reason string, as on mainnet.
    function approve(address spender, uint256 value) public {
        // Verbatim USDT rule; deliberately reason-less like the original.
        require(!((value != 0) && (_allowed[msg.sender][spender] != 0)));
        _allowed[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    /// Test helper (not in mainnet USDT in this form): lets tests fund extra accounts.
    function mint(address to, uint256 amount) public onlyOwner {
        _mint(to, amount);
    }

    function _move(address from, address to, uint256 value) private {
        uint256 fromBalance = _balances[from];
        require(fromBalance >= value, "TetherLike: insufficient balance");
        unchecked {
            _balances[from] = fromBalance - value;
        }
        // Cannot overflow: the sum of all balances is bounded by _totalSupply.
        unchecked {
            _balances[to] += value;
        }
        emit Transfer(from, to, value);
    }

    function _mint(address to, uint256 amount) private {
        _totalSupply += amount; // checked: reverts on overflow
        unchecked {
            _balances[to] += amount;
        }
        emit Transfer(address(0), to, amount);
    }
}
