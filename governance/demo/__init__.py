"""The quickstart's main job (`gov demo`), on the example repository shipped in
`governance/resources/example`.

* `walkthrough` - the story: a PR is checked, swept, main moves, prepare-merge lands it.
"""
