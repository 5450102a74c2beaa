package helper

// FunctionShapePoint is a point of a broken-linear function: its value
// Score at Utilization.
type FunctionShapePoint struct {
	Utilization int64
	Score       int64
}

// FunctionShape is the points of a broken-linear function, by increasing
// Utilization (validation guarantees the order).
type FunctionShape []FunctionShapePoint

// BuildBrokenLinearFunction returns f with f(p) = shape[0].Score for p at
// or below the first point, shape[n-1].Score above the last, and linear
// (integer arithmetic, as upstream's) between neighbouring points.
func BuildBrokenLinearFunction(shape FunctionShape) func(int64) int64 {
	return func(p int64) int64 {
		for i := range shape {
			if p <= shape[i].Utilization {
				if i == 0 {
					return shape[0].Score
				}
				prev := shape[i-1]
				return prev.Score + (shape[i].Score-prev.Score)*(p-prev.Utilization)/(shape[i].Utilization-prev.Utilization)
			}
		}
		return shape[len(shape)-1].Score
	}
}
