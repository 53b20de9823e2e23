"""What several test modules share: fixture repositories and paths (`repos`, `views_repo`), servers (`servers`),
test doubles (`fakes`) and the sync's hand-made documents (`sync_docs`). Test modules import from here (and take
pytest fixtures from conftest.py), never from one another."""
