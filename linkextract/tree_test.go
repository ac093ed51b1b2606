package linkextract

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

// scriptingOff is how Extract read a page before the crawler shared its tree with text extraction:
// its own parse with scripting off, where <noscript> content is markup in the tree.
func scriptingOff(t testing.TB, src string) *Page {
	t.Helper()
	base, err := urlnorm.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	var s scan
	root, err := html.ParseWithOptions(strings.NewReader(src), html.ParseOptionEnableScripting(false))
	if err != nil {
		s.tokens([]byte(src))
	} else {
		s.tree(root, false)
	}
	return s.page(base, DefaultMaxLinks)
}

func TestNoscriptAsMarkup(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string // link URLs
		text       string   // the first link's text
	}{
		{"in body", `<p>x</p><noscript><a href=/n>No JS</a></noscript><a href=/after>A</a>`, []string{"/n", "/after"}, "No JS"},
		{"in head", `<html><head><noscript><link rel=stylesheet href=/s.css><a href=/h>H</a></noscript><title>T</title></head><body><a href=/b>B</a>`,
			[]string{"/h", "/b"}, "H"},
		{"inside an anchor", `<a href=/a>Go<noscript><img alt=pic></noscript></a>`, []string{"/a"}, "Go pic"},
		{"escaped markup stays text", `<noscript>&lt;a href=/x&gt;</noscript><a href=/y>Y</a>`, []string{"/y"}, "Y"},
		{"nested noscript", `<noscript><noscript><a href=/nn>NN</a></noscript></noscript>`, []string{"/nn"}, "NN"},
		{"meta robots inside", `<head><noscript><meta name=robots content=nofollow></noscript></head><a href=/m>M</a>`, []string{"/m"}, "M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(pageURL, []byte(tt.html), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, l := range got.Links {
				urls = append(urls, strings.TrimPrefix(l.URL, "https://example.com"))
			}
			if !reflect.DeepEqual(urls, tt.want) || got.Links[0].Text != tt.text {
				t.Errorf("links %q, first text %q; want %q, %q", urls, got.Links[0].Text, tt.want, tt.text)
			}
			if old := scriptingOff(t, tt.html); !reflect.DeepEqual(got, old) {
				t.Errorf("differs from a parse with scripting off:\n got %s\nwant %s", dump(got), dump(old))
			}
		})
	}
}

func TestExtractTree(t *testing.T) {
	src := readFixture(t, "news.html")
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var before bytes.Buffer
	html.Render(&before, doc)
	got, err := ExtractTree(newsURL, doc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Extract(newsURL, src, Options{})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExtractTree differs from Extract:\n got %s\nwant %s", dump(got), dump(want))
	}
	var after bytes.Buffer
	html.Render(&after, doc)
	if before.String() != after.String() {
		t.Error("ExtractTree modified the tree")
	}
	if _, err := ExtractTree("mailto:x@example.com", doc, Options{}); err == nil {
		t.Error("ExtractTree accepted a page URL that is not http(s)")
	}
}

// FuzzScriptingOn holds the shared tree (html.Parse, scripting on, <noscript> content read as
// markup) to what Extract found in a tree of its own parsed with scripting off.
func FuzzScriptingOn(f *testing.F) {
	for _, seed := range []string{
		`<noscript><a href=/n>n</a></noscript>`,
		`<head><noscript><img src=p><a href=/h>h</a></noscript><base href=/b/><title>t</title></head><a href=x>x</a>`,
		`<a href=/a>a<noscript><b>b<a href=/c>c</noscript>d</a>`,
		`<table><noscript><a href=/t>t</a></noscript><tr><td><a href=/u>u</td></table>`,
		`<noscript><template><a href=/t></template><svg><a href=/s></svg><a href=/x rel=ugc>x</a></noscript>`,
		`<template><noscript><a href=/in-template></noscript></template><a href=/out>o</a>`,
		`<select><noscript><a href=/s>s</a></noscript></select>`,
		`<noscript>&lt;a href=/esc&gt;<a href="/a&amp;b">e</a></noscript>`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if openAtNoscriptEnd(src) {
			t.Skip("broken markup at a </noscript>: the documented difference")
		}
		got, _ := Extract(pageURL, []byte(src), Options{})
		want := scriptingOff(t, src)
		// Around a <noscript> the two trees can differ where the markup is misnested (the
		// parser's adoption agency clones an open anchor into the other tree's <noscript>, which
		// counts it twice as a self-link, and text lands in other anchors); what the crawler reads
		// (which URLs, nofollow, the page's directives, base and title) must not differ.
		strip := func(p *Page) *Page {
			c := *p
			c.Self, c.Dropped, c.Truncated = 0, 0, 0
			c.Links = append([]Link(nil), p.Links...)
			for i := range c.Links {
				c.Links[i].Text = ""
			}
			return &c
		}
		if g, w := strip(got), strip(want); !reflect.DeepEqual(g, w) {
			t.Errorf("scripting on:\n%s\nscripting off:\n%s", dump(g), dump(w))
		}
	})
}

// openAtNoscriptEnd reports a <noscript> whose content, as a parse with scripting on keeps it,
// ends inside a tag or comment ("<noscript><a href=/x </noscript>"): a parse with scripting off
// reads that tag on past the </noscript>, a fragment of the content alone drops it. It also
// reports one left open inside a <template> (see below). Both are broken markup.
func openAtNoscriptEnd(src string) bool {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return false
	}
	var open func(n *html.Node) bool
	open = func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "noscript" && n.Namespace == "" && n.FirstChild != nil {
			// A <noscript> left open inside a <template> takes the template's end tag and all that
			// follows into the inert template, where the other parse closes the template.
			text := n.FirstChild.Data
			if strings.Contains(strings.ToLower(text), "</template") {
				return true
			}
			// The tokenizer drops a tag cut off by the end of its input and ends a comment there.
			z := html.NewTokenizer(strings.NewReader(text))
			read := 0
			for {
				tt := z.Next()
				if tt == html.ErrorToken {
					break
				}
				raw := z.Raw()
				read += len(raw)
				if (tt == html.CommentToken || tt == html.DoctypeToken) && !strings.HasSuffix(string(raw), ">") {
					return true
				}
			}
			if read < len(text) {
				return true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if open(c) {
				return true
			}
		}
		return false
	}
	return open(doc)
}
