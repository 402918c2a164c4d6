"""The facts model: plain data about a project (module summaries, merged facts, class and
payload evidence) and the questions the analysis asks of them. Knows nothing of the engine."""
