"""Rendering results for people (rich tables) and programs (JSON/YAML); reports never compute."""
