

func.return
// loop's block argument is no stream source.  (On