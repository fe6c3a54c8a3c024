"""The leaderboard site: built from the results store into one `Site` value (`site`), turned into
page contexts and plots (`views`), and written as HTML pages, error browser, plots and exports
(Markdown, CSV, JSON) by the `writers`; `render.write_report` runs the three."""
