package linkextract

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

func FuzzExtract(f *testing.F) {
	for _, seed := range []string{
		``,
		`<a href="/x" rel="nofollow">x</a><a href="#y">y</a><base href="//other.example/b/">`,
		`<meta name=robots content="noindex,nofollow"><title>t</title><link rel=alternate href=feed>`,
		`<a href="\\host\p?q#f">a<img alt="i"><a href="javascript:x">b</a><area href="..">`,
		"<a href=\"http://b\xfccher.example/\">\xff</a><a href=\"  h\ttp://x/%zz \">",
		`<template><a href=/t></template><svg><a href=/s></svg><noscript><a href=/n></noscript>`,
		strings.Repeat("<div>", 520) + `<a href="/deep">deep</a><base href=/b/>`,
		string(trapPage(10)),
	} {
		f.Add(seed)
	}
	base, err := urlnorm.Parse(pageURL)
	if err != nil {
		f.Fatal(err)
	}
	const maxLinks = 64
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Extract(pageURL, []byte(src), Options{MaxLinks: maxLinks})
		if err != nil {
			t.Fatalf("Extract: %v", err)
		}
		again, _ := Extract(pageURL, []byte(src), Options{MaxLinks: maxLinks})
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("not deterministic:\n%s\n%s", dump(p), dump(again))
		}
		checkPage(t, p, maxLinks)
		// The tokenizer fallback only runs on deeply nested pages; hold it to the same rules.
		var s scan
		s.tokens([]byte(src))
		checkPage(t, s.page(base, maxLinks), maxLinks)
	})
}

// checkPage asserts what every Page must satisfy, whatever the input.
func checkPage(t *testing.T, p *Page, maxLinks int) {
	t.Helper()
	if len(p.Links)+len(p.Alternates) > maxLinks {
		t.Errorf("%d links and %d alternates exceed MaxLinks %d", len(p.Links), len(p.Alternates), maxLinks)
	}
	if p.Dropped < 0 || p.Self < 0 || p.Truncated < 0 {
		t.Errorf("negative counts in %s", dump(p))
	}
	if !utf8.ValidString(p.Title) || len(p.Title) > MaxTitleBytes || p.Title != strings.TrimSpace(p.Title) {
		t.Errorf("bad title %q", p.Title)
	}
	checkURL(t, p.Base)
	for _, list := range [][]Link{p.Links, p.Alternates} {
		seen := map[string]bool{}
		for _, l := range list {
			checkURL(t, l.URL)
			if seen[l.URL] {
				t.Errorf("duplicate URL %q", l.URL)
			}
			seen[l.URL] = true
			if l.URL == pageURL {
				t.Errorf("self-link %q listed", l.URL)
			}
			if !utf8.ValidString(l.Text) || len(l.Text) > MaxTextBytes || l.Text != strings.TrimSpace(l.Text) {
				t.Errorf("bad text %q", l.Text)
			}
			if l.Rel != strings.Join(strings.FieldsFunc(l.Rel, func(r rune) bool { return r < 0x80 && isHTMLSpace(byte(r)) }), " ") ||
				strings.ContainsAny(l.Rel, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				t.Errorf("rel %q not collapsed", l.Rel)
			}
		}
	}
	for _, l := range p.Links {
		if l.Tag != "a" && l.Tag != "area" {
			t.Errorf("link tag %q", l.Tag)
		}
	}
	for _, l := range p.Alternates {
		if l.Tag != "link" {
			t.Errorf("alternate tag %q", l.Tag)
		}
	}
}

func checkURL(t *testing.T, s string) {
	t.Helper()
	n, err := urlnorm.Normalize(s)
	if err != nil || n != s {
		t.Errorf("URL %q is not canonical: %q, %v", s, n, err)
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Fragment != "" || u.Host == "" {
		t.Errorf("URL %q is not an absolute http(s) URL without fragment", s)
	}
}
