{"job": {"x": {"group": {"g": {"task": {"t": {"driver": "docker", "bogus": 1}}}}}}}
