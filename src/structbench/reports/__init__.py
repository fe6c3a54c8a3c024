"""The leaderboard site rendered from the results store: overview, suite pages with cards and plots, error
browser (HTML), and the exports (Markdown, CSV, JSON)."""
