"""An OpenAI-compatible server that simulates a sized deployment in real time (`engine.py` for the rules,
`app.py` for the HTTP API), the target of the load tests. Run it with `python -m benchmarks_app.simserver` or
`python manage.py simserve`."""
