n = 
