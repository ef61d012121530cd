"""Utilities with no knowledge of grading: exceptions, the registry, frozen
containers, strict JSON, safe file reads, URLs and targets, fetching, lazy
names, text in markdown. Nothing here imports the rest of truereward.
"""
