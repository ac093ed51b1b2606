-- Schema version 14: how each version's text was extracted (issue 19). fetches.text_mode says
-- whether a stored version is the page's main content ('main'), its whole visible text because
-- archive.text is "full" ('full'), or its whole visible text because Main found no main content
-- to trust ('fallback'); NULL when no text was extracted from HTML (no content, a body that is not
-- HTML, or a fetch recorded before this version). urls.text_mode is the mode of the current
-- version, whose digest the next fetch is compared with: a version in the other kind of text is
-- compared with the previous one in the same kind, so moving between main and the whole text is
-- not reported as a change of most of the page.
ALTER TABLE fetches ADD COLUMN text_mode TEXT;
ALTER TABLE urls ADD COLUMN text_mode TEXT;
