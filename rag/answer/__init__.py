"""Answering from the abstracts: question handlers, generators, and the checks every
statement passes."""
