print("farecheck-server: not yet")
