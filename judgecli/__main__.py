from judgecli.startup import main

main()
