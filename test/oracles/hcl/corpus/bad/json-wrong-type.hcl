{"job": {"x": {"group": {"g": {"count": "many"}}}}}
