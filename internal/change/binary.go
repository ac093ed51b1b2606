package change

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// binaryVersion is the first byte of Digest.MarshalBinary. It names the
// normalisation and hashing as much as the layout: a digest made by another
// version of Summarize does not compare with this one's.
const binaryVersion = 1

// MarshalBinary encodes d for a database column, in about 165 bytes:
//
//	version byte (1) | hash length byte (0 or 16) | hash bytes | Norm (8, little-endian) |
//	Sim (8, little-endian) | Lines (uvarint) | Shingles (uvarint) | Sketch (128)
//
// Hash must be empty or 32 hex digits, as Summarize makes it.
func (d Digest) MarshalBinary() ([]byte, error) {
	raw, err := hex.DecodeString(d.Hash)
	if err != nil || len(raw) != 0 && len(raw) != 16 {
		return nil, fmt.Errorf("change: digest hash %q is not 32 hex digits", d.Hash)
	}
	if d.Lines < 0 || d.Shingles < 0 {
		return nil, errors.New("change: digest has a negative count")
	}
	b := make([]byte, 0, 2+len(raw)+16+2*binary.MaxVarintLen64+SketchSize)
	b = append(b, binaryVersion, byte(len(raw)))
	b = append(b, raw...)
	b = binary.LittleEndian.AppendUint64(b, d.Norm)
	b = binary.LittleEndian.AppendUint64(b, d.Sim)
	b = binary.AppendUvarint(b, uint64(d.Lines))
	b = binary.AppendUvarint(b, uint64(d.Shingles))
	b = append(b, d.Sketch[:]...)
	return b, nil
}

// ErrVersion is returned (wrapped) by UnmarshalBinary for a digest made by
// another version of this package: re-summarise the stored text.
var ErrVersion = errors.New("change: digest from another version")

// UnmarshalBinary decodes what MarshalBinary encoded.
func (d *Digest) UnmarshalBinary(b []byte) error {
	bad := func(what string) error { return fmt.Errorf("change: malformed digest: %s", what) }
	if len(b) < 2 {
		return bad("too short")
	}
	if b[0] != binaryVersion {
		return fmt.Errorf("%w (format %d, want %d)", ErrVersion, b[0], binaryVersion)
	}
	n := int(b[1])
	if n != 0 && n != 16 {
		return bad("hash length")
	}
	b = b[2:]
	if len(b) < n+16 {
		return bad("too short")
	}
	var out Digest
	out.Hash = hex.EncodeToString(b[:n])
	b = b[n:]
	out.Norm = binary.LittleEndian.Uint64(b)
	out.Sim = binary.LittleEndian.Uint64(b[8:])
	b = b[16:]
	for _, f := range []*int{&out.Lines, &out.Shingles} {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > 1<<40 {
			return bad("count")
		}
		*f, b = int(v), b[k:]
	}
	if len(b) != SketchSize {
		return bad("sketch length")
	}
	copy(out.Sketch[:], b)
	*d = out
	return nil
}
