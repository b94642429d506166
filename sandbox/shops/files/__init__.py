"""A fake drop folder of CSV, JSON Lines and Parquet exports for the files source, made from the
same generated shop as the fake database. See README.md."""
