package sdk

// alphabet is Crockford's base32 alphabet: digits and upper-case letters
// without I, L, O and U, so no two characters look alike. Input is read case
// insensitively; no other character is mapped, so every edit of a key is
// detected.
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var decodeMap = func() [256]byte {
	var m [256]byte
	for i := range m {
		m[i] = 0xff
	}
	for i := range len(alphabet) {
		m[alphabet[i]] = byte(i)
		m[alphabet[i]|0x20] = byte(i) // lower case
	}
	return m
}()

// encodedLen is the number of characters encoding n bytes.
func encodedLen(n int) int { return (n*8 + 4) / 5 }

// encode writes b in the alphabet, most significant bits first, the last
// character padded with zero bits.
func encode(b []byte) string {
	out := make([]byte, 0, encodedLen(len(b)))
	var acc uint32
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, alphabet[acc>>uint(bits)&31])
		}
	}
	if bits > 0 {
		out = append(out, alphabet[acc<<uint(5-bits)&31])
	}
	return string(out)
}

// decode reads exactly n bytes from s. It reports false for a wrong length,
// a character outside the alphabet, or padding bits that are not zero, so
// each byte string has exactly one encoding.
func decode(s string, n int) ([]byte, bool) {
	if len(s) != encodedLen(n) {
		return nil, false
	}
	out := make([]byte, 0, n)
	var acc uint32
	bits := 0
	for i := range len(s) {
		v := decodeMap[s[i]]
		if v == 0xff {
			return nil, false
		}
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			if len(out) < n {
				out = append(out, byte(acc>>uint(bits)))
			}
		}
	}
	if acc&(1<<uint(bits)-1) != 0 {
		return nil, false
	}
	return out, len(out) == n
}
