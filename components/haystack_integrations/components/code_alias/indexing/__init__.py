"""Indexing: reading and splitting files, the alias dictionary, the index folder's files and deltas, the stores.

Nothing is imported here: import the modules themselves (`indexing.store`, `indexing.dictionary_builder`, ...).
"""
