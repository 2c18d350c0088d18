"""Stage 6, the only writer of a site folder: where a build may write (guard), the state it keeps
beside the site (state), and the new tree staged and swapped in whole (staging)."""
