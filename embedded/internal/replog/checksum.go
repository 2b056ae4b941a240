package replog

import (
	"hash/crc64"
	"math/bits"
)

var crcTable = crc64.MakeTable(crc64.ISO)

// NextChecksum returns the checksum of a frame with page that follows a
// frame of checksum prev (0 before a log's first frame). sqld chains
// CRC-64/GO-ISO over the pages of its log, seeding each digest with the
// previous checksum as the Rust crc crate takes an initial value: bit
// reversed, as the register of a reflected CRC.
func NextChecksum(prev uint64, page []byte) uint64 {
	return crc64.Update(^bits.Reverse64(prev), crcTable, page)
}
