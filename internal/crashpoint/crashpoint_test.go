package crashpoint

import "testing"

// An unarmed point, or another point than the armed one, does nothing; the armed point itself is
// exercised by the subprocess tests in strata's main_test.go, which it kills.
func TestHitOnlyTheArmedPoint(t *testing.T) {
	Hit("anything") // nothing armed
	Arm("elsewhere")
	t.Cleanup(func() { armed.Store(nil) })
	Hit("here")
}
