"""Text as papers and questions give it: markup, sentences, titles, and what must never be
shown or obeyed."""
