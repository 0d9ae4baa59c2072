package devnet

// The --op-stack mode: Optimism's real GasPriceOracle and L1Block predeploys
// at their addresses, from the published npm artifacts
// (@eth-optimism/contracts-bedrock 0.17.3, in testdata/package.json beside
// the Uniswap ones). That version has the Ecotone and Fjord fee functions
// (getL1Fee, getL1FeeUpperBound, isFjord). On an OP-stack chain the
// depositor account sets L1Block's values in every block's first
// transaction; here they are set once, in the genesis state, in the slots
// the artifact's storage layout names, and GasPriceOracle's isEcotone and
// isFjord flags likewise: the oracle's real bytecode then prices a real L1
// fee. One change to the published bytecode: L1Block's depositor (the
// only account allowed to set its values, 0xDeaD…0001, whose key no one
// has) is the dev facilitator account here, so that SetL1Values can move
// the L1 fee between blocks as a sequencer's deposit does. geth does not
// charge that fee (it is not an OP-stack node): receipts have no l1Fee,
// and tests that settle on one put it there with a proxy.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/walletgate/walletgate/signer"
)

// The OP-stack predeploys' addresses.
var (
	GasPriceOracle = common.HexToAddress("0x420000000000000000000000000000000000000F")
	L1Block        = common.HexToAddress("0x4200000000000000000000000000000000000015")
)

const (
	opArtifactGPO     = "@eth-optimism/contracts-bedrock/forge-artifacts/GasPriceOracle.sol/GasPriceOracle.json"
	opArtifactL1Block = "@eth-optimism/contracts-bedrock/forge-artifacts/L1Block.sol/L1Block.json"
	opArtifactMarker  = "@eth-optimism/contracts-bedrock"
)

// L1Values are what L1Block holds: what the oracle prices the L1 data fee
// with (Ecotone/Fjord: base fee and blob base fee, each with its scalar).
type L1Values struct {
	BaseFee           *big.Int // L1 base fee, wei
	BlobBaseFee       *big.Int // L1 blob base fee, wei
	BaseFeeScalar     uint32
	BlobBaseFeeScalar uint32
}

// DefaultL1Values are Base mainnet's scalars with an L1 at 10 gwei and blobs
// at 1 wei.
func DefaultL1Values() L1Values {
	return L1Values{BaseFee: big.NewInt(10e9), BlobBaseFee: big.NewInt(1), BaseFeeScalar: 2269, BlobBaseFeeScalar: 1055762}
}

// opStackAlloc is the genesis accounts of the two predeploys, their code
// from the artifacts under dir (a node_modules directory) and their storage
// set to v.
func opStackAlloc(dir string, v L1Values) (types.GenesisAlloc, error) {
	gpo, err := deployedCode(dir, opArtifactGPO)
	if err != nil {
		return nil, err
	}
	l1, err := deployedCode(dir, opArtifactL1Block)
	if err != nil {
		return nil, err
	}
	l1 = bytes.ReplaceAll(l1, opDepositor.Bytes(), signer.DevFacilitatorAddress.Bytes())
	word := func(x *big.Int) common.Hash { return common.BigToHash(x) }
	// L1Block's layout (the artifact's storageLayout): slot 0 number
	// (uint64) and timestamp (uint64 at byte 8); slot 1 basefee; slot 3
	// sequenceNumber (uint64), blobBaseFeeScalar (uint32 at byte 8),
	// baseFeeScalar (uint32 at byte 12); slot 7 blobBaseFee.
	slot0 := new(big.Int).Lsh(big.NewInt(1), 64) // timestamp 1
	slot0.Or(slot0, big.NewInt(1))               // number 1
	slot3 := new(big.Int).Lsh(new(big.Int).SetUint64(uint64(v.BaseFeeScalar)), 96)
	slot3.Or(slot3, new(big.Int).Lsh(new(big.Int).SetUint64(uint64(v.BlobBaseFeeScalar)), 64))
	l1Storage := map[common.Hash]common.Hash{
		common.BigToHash(big.NewInt(0)): word(slot0),
		common.BigToHash(big.NewInt(1)): word(v.BaseFee),
		common.BigToHash(big.NewInt(3)): word(slot3),
		common.BigToHash(big.NewInt(7)): word(v.BlobBaseFee),
	}
	// GasPriceOracle's slot 0: isEcotone (byte 0) and isFjord (byte 1).
	gpoStorage := map[common.Hash]common.Hash{common.BigToHash(big.NewInt(0)): common.BigToHash(big.NewInt(0x0101))}
	return types.GenesisAlloc{
		GasPriceOracle: {Code: gpo, Storage: gpoStorage, Balance: new(big.Int)},
		L1Block:        {Code: l1, Storage: l1Storage, Balance: new(big.Int)},
	}, nil
}

// opDepositor is the OP-stack depositor account, in L1Block's code.
var opDepositor = common.HexToAddress("0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001")

// SetL1Values sets L1Block's values to v in a block of their own, as the
// sequencer's deposit does at the start of each OP-stack block: the oracle
// prices the L1 fee of later transactions with them. It calls the real
// setL1BlockValuesEcotone from the dev facilitator account (the depositor
// on this chain, see the package comment above).
func (d *Devnet) SetL1Values(ctx context.Context, v L1Values) error {
	// setL1BlockValuesEcotone's packed calldata: baseFeeScalar (uint32),
	// blobBaseFeeScalar (uint32), sequenceNumber (uint64), timestamp
	// (uint64), number (uint64), basefee, blobBaseFee, hash, batcherHash.
	data := []byte{0x44, 0x0a, 0x5e, 0x20}
	data = binary.BigEndian.AppendUint32(data, v.BaseFeeScalar)
	data = binary.BigEndian.AppendUint32(data, v.BlobBaseFeeScalar)
	data = binary.BigEndian.AppendUint64(data, 0) // sequence number
	data = binary.BigEndian.AppendUint64(data, 1) // timestamp
	data = binary.BigEndian.AppendUint64(data, 1) // number
	data = append(data, common.BigToHash(v.BaseFee).Bytes()...)
	data = append(data, common.BigToHash(v.BlobBaseFee).Bytes()...)
	data = append(data, make([]byte, 64)...) // hash, batcher hash
	to := L1Block
	_, err := d.SendAs(ctx, signer.DevFacilitator(), &to, nil, data, 100_000)
	return err
}

// deployedCode reads an artifact's deployed (runtime) bytecode.
func deployedCode(dir, rel string) ([]byte, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dev chain: --op-stack needs Optimism's contract artifacts (%s): %w; run 'cd testdata && npm ci --omit=peer' in the walletgate source tree", opArtifactMarker, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 4*maxArtifactSize+1))
	if err != nil {
		return nil, fmt.Errorf("dev chain: read %s: %w", path, err)
	}
	var j struct {
		Deployed struct {
			Object         string          `json:"object"`
			LinkReferences json.RawMessage `json:"linkReferences"`
		} `json:"deployedBytecode"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("dev chain: %s: %w", path, err)
	}
	if l := string(j.Deployed.LinkReferences); l != "" && l != "{}" && l != "null" {
		return nil, fmt.Errorf("dev chain: %s needs linked libraries", path)
	}
	code := common.FromHex(j.Deployed.Object)
	if len(code) == 0 {
		return nil, fmt.Errorf("dev chain: %s holds no deployed bytecode", path)
	}
	return code, nil
}

// opArtifactsDir is where the OP artifacts are: the given directory, or the
// Uniswap artifacts' (uniswap, or FindArtifacts) when it holds them.
func opArtifactsDir(given, uniswap string) string {
	if given != "" {
		return given
	}
	if uniswap != "" && isDir(filepath.Join(uniswap, opArtifactMarker)) {
		return uniswap
	}
	if dir, ok := FindArtifacts(); ok && isDir(filepath.Join(dir, opArtifactMarker)) {
		return dir
	}
	return ""
}
