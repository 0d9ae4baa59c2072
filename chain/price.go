package chain

// Chainlink prices, read on chain.
//
// Rules of this file:
//   - A price is a feed's latestRoundData (and its decimals), read as views
//     that ride in a batch the caller makes anyway (StateAndViews, the
//     simulation, the confirm's re-read): no round trip of its own.
//   - A round is judged against the head read in the same batch, never the
//     local clock: it is refused (*PriceError) when its answer is not
//     positive, when it is older than the feed's heartbeat (plus a margin),
//     when it claims a time after the head, or, on an L2, when the sequencer
//     uptime feed says down or came up less than a grace period ago.
//   - A USD value is rounded up: a price never makes a spend look smaller.

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// CodePriceUnavailable is the refusal of a write whose USD value cannot be
// known from a fresh, positive price.
const CodePriceUnavailable = "PRICE_UNAVAILABLE"

// latestRoundData() and decimals() of Chainlink's AggregatorV3Interface.
var (
	latestRoundDataSelector = []byte{0xfe, 0xaf, 0x96, 0x8c}
	decimalsSelector        = []byte{0x31, 0x3c, 0xe5, 0x67}
)

// PriceViews are the two reads a feed's price needs: latestRoundData and
// decimals. Add them to a batch; ReadRound decodes them.
func PriceViews(feed common.Address) [2]*View {
	return [2]*View{{To: feed, Data: latestRoundDataSelector}, {To: feed, Data: decimalsSelector}}
}

// Round is a feed's latest round.
type Round struct {
	Feed      common.Address
	RoundID   *big.Int
	Answer    *big.Int // in units of 10^-Decimals
	Decimals  uint8
	StartedAt uint64 // unix seconds
	UpdatedAt uint64 // unix seconds
}

// PriceError is a price that may not be used. It names the feed, its round
// and the round's age, so that an operator can look the feed up.
type PriceError struct {
	Feed    common.Address
	RoundID *big.Int      // nil when no round could be read
	Age     time.Duration // the round's age at the head; 0 when unknown
	Reason  string
}

// Error returns the reason with the feed, round and age.
func (e *PriceError) Error() string {
	round := "no round"
	if e.RoundID != nil {
		round = "round " + e.RoundID.String()
	}
	age := ""
	if e.Age > 0 {
		age = ", updated " + e.Age.Round(time.Second).String() + " ago"
	}
	return fmt.Sprintf("price feed %s (%s%s): %s", e.Feed.Hex(), round, age, e.Reason)
}

// ReadRound decodes the views PriceViews returned, once their batch ran.
func ReadRound(v [2]*View) (Round, error) {
	feed := v[0].To
	if v[0].Err != nil || v[1].Err != nil {
		return Round{}, &PriceError{Feed: feed, Reason: "the feed does not answer latestRoundData and decimals (no contract there, or not a Chainlink feed)"}
	}
	r, d := v[0].Return, v[1].Return
	if len(r) != 5*32 || len(d) != 32 {
		return Round{}, &PriceError{Feed: feed, Reason: fmt.Sprintf("the feed answered %d and %d bytes, not a Chainlink round (160) and decimals (32)", len(r), len(d))}
	}
	dec := new(big.Int).SetBytes(d)
	if dec.Cmp(big.NewInt(36)) > 0 {
		return Round{}, &PriceError{Feed: feed, Reason: "the feed reports " + dec.String() + " decimals"}
	}
	word := func(i int) *big.Int { return new(big.Int).SetBytes(r[32*i : 32*(i+1)]) }
	answer := word(1)
	if r[32] >= 0x80 { // int256: two's complement
		answer.Sub(answer, new(big.Int).Lsh(big.NewInt(1), 256))
	}
	started, updated := word(2), word(3)
	if !started.IsUint64() || !updated.IsUint64() {
		return Round{}, &PriceError{Feed: feed, RoundID: word(0), Reason: "the round's times do not fit in 64 bits"}
	}
	return Round{Feed: feed, RoundID: word(0), Answer: answer, Decimals: uint8(dec.Uint64()), StartedAt: started.Uint64(), UpdatedAt: updated.Uint64()}, nil
}

// Fresh returns nil when the round may price a spend at the head's time
// now (unix seconds): a positive answer, updated at most heartbeat+margin
// before now and not after it.
func (r Round) Fresh(now uint64, heartbeat, margin time.Duration) error {
	refuse := func(age time.Duration, reason string) error {
		return &PriceError{Feed: r.Feed, RoundID: r.RoundID, Age: age, Reason: reason}
	}
	if r.UpdatedAt > now {
		return refuse(0, fmt.Sprintf("the round claims to be updated at %d, after the chain's head (%d)", r.UpdatedAt, now))
	}
	age := time.Duration(now-r.UpdatedAt) * time.Second
	if r.UpdatedAt == 0 {
		return refuse(0, "the round was never updated")
	}
	if r.Answer.Sign() <= 0 {
		return refuse(age, "the answer is "+r.Answer.String()+", not a positive price")
	}
	if age > heartbeat+margin {
		return refuse(age, fmt.Sprintf("the round is older than the feed's heartbeat (%s)", heartbeat))
	}
	return nil
}

// SequencerUp returns nil when the L2 sequencer uptime round (answer 0: up,
// 1: down; StartedAt: since when) says up for at least grace at now.
func (r Round) SequencerUp(now uint64, grace time.Duration) error {
	refuse := func(reason string) error {
		return &PriceError{Feed: r.Feed, RoundID: r.RoundID, Reason: reason}
	}
	if r.Answer.Sign() != 0 {
		return refuse("the L2 sequencer uptime feed says the sequencer is down: prices on this chain may be stale")
	}
	if r.StartedAt == 0 || r.StartedAt > now {
		return refuse("the L2 sequencer uptime feed has no valid status time")
	}
	if up := time.Duration(now-r.StartedAt) * time.Second; up < grace {
		return refuse(fmt.Sprintf("the L2 sequencer came back up %s ago, within the %s grace period", up, grace))
	}
	return nil
}

// USDValue is amount (base units of an asset with decimals) in base units of
// 10^-usdDecimals USD at the round's answer, rounded up.
func (r Round) USDValue(amount *big.Int, decimals, usdDecimals uint8) *big.Int {
	num := new(big.Int).Mul(amount, r.Answer)
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(usdDecimals)), nil))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)+int64(r.Decimals)), nil)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
