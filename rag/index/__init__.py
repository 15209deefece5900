"""The index: embeddings, the Chroma store, search snapshots, BM25 and the ranking features."""
