package serve

// natCompare orders path names as people number them: runs of digits compare as numbers, so
// release.0.7 comes before release.0.10 and p9 before p10. Other bytes compare as bytes; of two
// names equal but for leading zeros, the one with fewer comes first, so the order is total.
func natCompare(a, b string) int {
	zeros := 0 // the first difference in leading zeros, to break a tie
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			if zeros == 0 {
				zeros = cmpInt(i-si, j-sj)
			}
			continue
		}
		if ca != cb {
			return cmpInt(int(ca), int(cb))
		}
		i, j = i+1, j+1
	}
	switch {
	case len(a)-i != len(b)-j:
		return cmpInt(len(a)-i, len(b)-j)
	case zeros != 0:
		return zeros
	}
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
