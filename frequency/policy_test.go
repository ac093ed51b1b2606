package frequency

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		policy  string
		opts    []Option
		want    Policy
		wantErr string
	}{
		{"bouras", "bouras", nil, Bouras{}, ""},
		{"empty name is the default", "", nil, Bouras{}, ""},
		{"case and spaces", " Bouras ", nil, Bouras{}, ""},
		{"options", "bouras", []Option{WithLimit(20), WithBounds(2, 14)}, Bouras{Limit: 20, Min: 2, Max: 14}, ""},
		{"later options win", "bouras", []Option{WithLimit(20), WithLimit(5)}, Bouras{Limit: 5}, ""},
		{"unknown", "cho", nil, nil, `unknown policy "cho" (known: bouras, nutch, uniform)`},
		{"invalid limit", "bouras", []Option{WithLimit(-1)}, nil, "limit -1"},
		{"invalid bounds", "bouras", []Option{WithBounds(10, 5)}, nil, "min fr_max 10 is above max fr_max 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New(tt.policy, tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) error = %v, want one containing %q", tt.policy, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("New(%q) = %#v, %v; want %#v", tt.policy, got, err, tt.want)
			}
			if got.Name() != "bouras" {
				t.Errorf("Name() = %q", got.Name())
			}
		})
	}
	if _, err := New("nope"); !errors.Is(err, ErrUnknownPolicy) {
		t.Errorf("New(unknown) error %v does not wrap ErrUnknownPolicy", err)
	}
}

// constant is a trivial policy for the registry tests.
type constant int

func (constant) Name() string           { return "test-constant" }
func (c constant) NextFrMax(_ Page) int { return int(c) }

func TestRegister(t *testing.T) {
	Register("Test-Constant", func(o Options) (Policy, error) { return constant(max(o.Max, 1)), nil })
	t.Cleanup(func() {
		registry.Lock()
		delete(registry.m, "test-constant")
		registry.Unlock()
	})
	if got := Names(); !slices.Equal(got, []string{"bouras", "nutch", "test-constant", "uniform"}) {
		t.Errorf("Names() = %v", got)
	}
	p, err := New("test-constant", WithBounds(1, 7))
	if err != nil || p.NextFrMax(Page{}) != 7 {
		t.Fatalf("New(test-constant) = %v, %v", p, err)
	}
	if _, err := New("x"); err == nil || !strings.Contains(err.Error(), "(known: bouras, nutch, test-constant, uniform)") {
		t.Errorf("unknown-name error %v does not list the registered policies", err)
	}
	for _, tt := range []struct {
		name string
		f    Factory
	}{
		{"bouras", func(Options) (Policy, error) { return Bouras{}, nil }},
		{" TEST-constant", func(Options) (Policy, error) { return Bouras{}, nil }},
		{"", func(Options) (Policy, error) { return Bouras{}, nil }},
		{"nil-factory", nil},
	} {
		t.Run("panics/"+tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", tt.name)
				}
			}()
			Register(tt.name, tt.f)
		})
	}
}
