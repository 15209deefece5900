"""Reading paper lists and writing them into the index."""
