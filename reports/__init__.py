"""Leaderboard rendering from the results store (HTML, Markdown, CSV, JSON)."""
