package vector

// The SQL functions, argument handling and errors as libSQL's (vector.c:
// vectorFuncHintedType, vectorExtractFunc, vectorDistanceFunc). An
// argument is what SQLite passes a Go function: nil, int64, float64,
// string or []byte.

// Construct is vector32(arg) (vector(arg)), vector64, vector1bit,
// vector8, vector16 and vectorb16 for t: arg, text or a vector blob of
// any type, as a blob of type t. Text is parsed as FLOAT64 for vector64
// and as FLOAT32 for every other type, then converted.
func Construct(arg any, t Type) ([]byte, error) {
	hint := Float32
	if t == Float64 {
		hint = Float64
	}
	from, _, err := detect(arg, hint)
	if err != nil {
		return nil, err
	}
	v, err := parse(arg, from)
	if err != nil {
		return nil, err
	}
	return Convert(v, t).Blob(), nil
}

// Parse parses a vector argument as libSQL's functions do: a blob of any
// type, or text as FLOAT32 (or as FLOAT64 if hint is Float64).
func Parse(arg any, hint Type) (*Vector, error) {
	t, _, err := detect(arg, hint)
	if err != nil {
		return nil, err
	}
	return parse(arg, t)
}

// Extract is vector_extract(arg): the text of a vector, FLOAT64 elements
// as they are and every other type's as FLOAT32.
func Extract(arg any) (string, error) {
	v, err := Parse(arg, 0)
	if err != nil {
		return "", err
	}
	if v.Type != Float32 && v.Type != Float64 {
		v = Convert(v, Float32)
	}
	return v.Text(), nil
}

// A Metric is a distance between two vectors of one type and length.
type Metric uint8

// The metrics of libSQL's vector_distance_* and of its vector indexes.
const (
	Cosine Metric = 1 // vector_distance_cos; the Hamming distance for FLOAT1BIT
	L2     Metric = 2 // vector_distance_l2
)

// Distance is vector_distance_cos(a, b) or vector_distance_l2(a, b): the
// arguments must be of one type and length. The result is a float32
// value, as libSQL's is (it may be NaN, which SQLite makes NULL).
func Distance(m Metric, a, b any) (float64, error) {
	t1, d1, err := detect(a, 0)
	if err != nil {
		return 0, err
	}
	t2, d2, err := detect(b, 0)
	if err != nil {
		return 0, err
	}
	if t1 != t2 {
		return 0, errorf("vector_distance: vectors must have the same type: %d != %d", t1, t2)
	}
	if d1 != d2 {
		return 0, errorf("vector_distance: vectors must have the same length: %d != %d", d1, d2)
	}
	if m == L2 && t1 == Float1Bit {
		return 0, errorf("vector_distance: l2 distance is not supported for float1bit vectors")
	}
	v1, err := parse(a, t1)
	if err != nil {
		return 0, err
	}
	v2, err := parse(b, t2)
	if err != nil {
		return 0, err
	}
	return float64(VectorDistance(m, v1, v2)), nil
}

// VectorDistance is the distance m between two parsed vectors of one type
// and length.
func VectorDistance(m Metric, a, b *Vector) float32 {
	if m == L2 {
		return euclidean(a, b)
	}
	return cosine(a, b)
}
