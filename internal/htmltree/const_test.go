package htmltree

import (
	"testing"

	"golang.org/x/net/html/atom"
)

// TestSpecialElementsAreTheMap: isSpecialElement's switch on atoms says what x/net/html's map of
// names says, for every name of the map and every other atom.
func TestSpecialElementsAreTheMap(t *testing.T) {
	for name, special := range isSpecialElementMap {
		a := atom.Lookup([]byte(name))
		if a == 0 {
			t.Errorf("%q is not an atom: the switch cannot name it", name)
			continue
		}
		if got := isSpecialElement(&Node{Type: ElementNode, DataAtom: a, Data: name}); got != special {
			t.Errorf("isSpecialElement(%q) = %v, want %v", name, got, special)
		}
	}
	n := 0
	for a := atom.Atom(1); a < 1<<24; a++ {
		name := a.String()
		if name == "" || atom.Lookup([]byte(name)) != a {
			continue
		}
		n++
		if got := isSpecialElement(&Node{Type: ElementNode, DataAtom: a, Data: name}); got != isSpecialElementMap[name] {
			t.Errorf("isSpecialElement(%q) = %v, want %v", name, got, isSpecialElementMap[name])
		}
	}
	if n < 300 {
		t.Errorf("only %d atoms checked", n)
	}
}
