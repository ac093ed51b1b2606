// Package archive stores each crawled version of a page in a dated, browsable directory tree, so
// that a crawl can be read with a file manager or a shell on Linux, macOS and Windows without
// strata.
//
// # Layout
//
// This is the "directory save system" of Bouras et al., with one directory per run:
//
//	<root>/2026-11-22T031500Z/                 RunDir: UTC start of the run, sorts by time
//	    manifest.jsonl                         one line per page stored in the run
//	    www.example.com/                       PagePath of https://www.example.com/
//	        page.html page.txt page.json       bytes as served, extracted text, metadata
//	        docs/                              https://www.example.com/docs
//	            page.html ...
//	            _index/page.html ...           https://www.example.com/docs/
//	            _q_v=2/page.html ...           https://www.example.com/docs?v=2
//	    www.example.com_8080_http/             http://www.example.com:8080/
//
// Every page has a directory of its own, so a URL can be a page and the parent of pages at once.
// Files are written with WriteFile, which never leaves a half-written page.html behind: a crash
// leaves at most a temporary ".strata-tmp-*" file, which CleanTemp removes.
//
// # Names
//
// PagePath maps a URL to a path relative to the run directory. The host directory is the host (with
// '_' escaped, so the first '_' ends it), then "_<port>" if the URL has a port, then "_http" for
// plain http (https is unmarked; another scheme would be "_<scheme>"). Each
// '/'-separated path segment becomes one directory, decoded from the escaped path, so %2F stays
// inside its segment. The query, if any (a bare "?" counts), becomes a last directory "_q_<query>",
// kept in its escaped form. The fragment and user information are ignored.
//
// Only the bytes a-z 0-9 - . _ = + appear literally. Any other byte is written %xx with lower-case
// hex, so "~" is %7e and "%" is %25; upper-case letters are written in lower case and the name gets
// a suffix "~u<hex>", a bit mask of which letters were upper case (first letter = lowest bit):
// "About" is about~u1, "README.md" is readme.md~u3f. As no name holds an upper-case letter,
// case-insensitive file systems (macOS, Windows) cannot merge two of them. A path segment in
// which a sub-delimiter (! $ & ' ( ) * + , ; = : @ [ ]) was percent-encoded gets "~p<hex>", the
// same kind of mask over those bytes, because /a:b and /a%3Ab are different URLs: a%3ab and
// a%3ab~p1. With both, the suffix is "~u<hex>p<hex>". Short of the hashing below, the encoding can
// be undone, so different normalised URLs get different directories. Non-ASCII bytes are escaped
// too, which also keeps macOS from rewriting names into another Unicode normal form.
//
// A name never starts with '.', '_', '-', '+' or '=' taken from the URL (hidden files, our markers,
// command options, zsh expansion), never starts with "page." or "manifest." (our own files), never
// has a Windows device name such as con, nul, com1 or lpt1.txt as its base, and never ends in '.':
// in each case the offending byte is escaped, as in %2egit, %70age.html, %63on, a%2e. So "." and
// ".." become %2e and %2e%2e and cannot climb the tree. Names that start with '_' are ours:
// _index for an empty segment (the one after a trailing slash, or between two slashes), _q_ for
// the query, _nohost for a URL without a host, and _more~h for a folded tail.
//
// A name longer than 200 bytes keeps at most its first 174 bytes, never half an escape, and ends in
// "~h" and 24 hex digits of the SHA-256 of the whole name. If the whole path would exceed 2048 bytes, the leading directories
// that fit are kept and the rest are folded into one directory "_more~h" followed by 32 hex digits
// of the SHA-256 of the rest. Windows programs still limited to 260-byte paths need long-path
// support for deep pages.
package archive
