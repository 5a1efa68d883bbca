from meshify.cli import main

main()
