"""The site's writers: page contexts and a built `Site` -> files (HTML pages, `leaderboard.md`,
`results.csv`/`results.json`, SVG plots, the error browser's scripts). They format and write; what
each file shows is decided by the build (`structbench.reports.builders.site`) and the views
(`structbench.reports.views`)."""
