print("farecheck")
