from benchapp.cli import main

main()
