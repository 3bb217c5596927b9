{"job": 
