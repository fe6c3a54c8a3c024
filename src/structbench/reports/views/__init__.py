"""The site's views: a built `Site` (`structbench.reports.builders.site`) -> the context of every page and the
plots to draw, with no store and no file access, so that what a page shows is decided in one place
and the writers (`structbench.reports.writers`) only format and write it."""
