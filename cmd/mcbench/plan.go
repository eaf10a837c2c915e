package main

import "github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"

// The plan, its cases and results are benchplan's, shared with the report
// and the drive; the runner names them briefly.
type (
	Case   = benchplan.Case
	Params = benchplan.Params
	Shape  = benchplan.Shape
	Result = benchplan.Result
	Run    = benchplan.Run
)

const (
	schema = benchplan.Schema

	scVerifyWrite = benchplan.VerifyWrite
	scFill        = benchplan.Fill
	scWritePerf   = benchplan.WritePerf
	scReadPerf    = benchplan.ReadPerf
	scMixedRW     = benchplan.MixedRW
	scHiSet       = benchplan.HiCacheSet
	scHiGet       = benchplan.HiCacheGet
	scHiExists    = benchplan.HiCacheExists
	scMultiPut    = benchplan.MultiPut
	scMultiGet    = benchplan.MultiGet
	scMemcpy      = benchplan.Memcpy
	scPrefix      = benchplan.PrefixLookup

	apiPlain = benchplan.APIPlain

	poolMLA = benchplan.PoolMLA

	mlaLayers, mlaLatent            = benchplan.MLALayers, benchplan.MLALatent
	mhaLayers, mhaHeads, mhaHeadDim = benchplan.MHALayers, benchplan.MHAHeads, benchplan.MHAHeadDim
)
