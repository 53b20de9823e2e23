"""The application: `CodeSearch` (index a repository, ask it questions) on the stages' pipelines.

Nothing is imported here: import the modules themselves (`app.search`, `app.answer`, `app.pipelines`, ...).
"""
