"""Finding the papers for a question: hybrid search, fusion, reranking."""
