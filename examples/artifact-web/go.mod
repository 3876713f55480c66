module example.com/artifact-web

go 1.22
