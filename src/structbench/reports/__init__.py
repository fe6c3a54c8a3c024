"""The leaderboard site and the reproductions page, both made from a results store.

The site (`structbench report`) in three stages: the `builders` read the store into one frozen
`Site` value, `views` turn it into page contexts and plots, and `writers` write the HTML pages, error
browser, SVG plots and exports (Markdown, CSV, JSON); `render.write_report` runs the three and
swaps the finished folder into place. `reproductions` is a product of its own:
`docs/reproductions.md`, the reference runs beside the papers' numbers (`structbench reference tables`).
"""
