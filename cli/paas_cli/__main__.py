from paas_cli.main import main

main()
