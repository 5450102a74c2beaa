package storage

import (
	"errors"
	"fmt"
)

// ErrorCode classifies a StorageError.
type ErrorCode int

const (
	ErrCodeKeyNotFound ErrorCode = iota + 1
	ErrCodeKeyExists
	ErrCodeResourceVersionConflicts
	ErrCodeInvalidObj
	ErrCodeUnreachable
	ErrCodeTimeout
	ErrCodeCorruptObj
)

var errCodeMessages = map[ErrorCode]string{
	ErrCodeKeyNotFound:              "key not found",
	ErrCodeKeyExists:                "key exists",
	ErrCodeResourceVersionConflicts: "resource version conflicts",
	ErrCodeInvalidObj:               "invalid object",
	ErrCodeUnreachable:              "server unreachable",
	ErrCodeTimeout:                  "request timeout",
	ErrCodeCorruptObj:               "corrupt object",
}

// StorageError is a storage failure about one key. The API server turns it
// into the matching API status (NotFound, AlreadyExists, Conflict, ...).
type StorageError struct {
	Code            ErrorCode
	Key             string
	ResourceVersion int64
	Msg             string
	Err             error
}

func (e *StorageError) Error() string {
	s := fmt.Sprintf("StorageError: %s, Code: %d, Key: %s, ResourceVersion: %d", errCodeMessages[e.Code], e.Code, e.Key, e.ResourceVersion)
	if e.Msg != "" {
		s += ", AdditionalErrorMsg: " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *StorageError) Unwrap() error { return e.Err }

func newErr(code ErrorCode, key string, rv int64, msg string) *StorageError {
	return &StorageError{Code: code, Key: key, ResourceVersion: rv, Msg: msg}
}

// NewKeyNotFoundError reports that key does not exist.
func NewKeyNotFoundError(key string, rv int64) *StorageError {
	return newErr(ErrCodeKeyNotFound, key, rv, "")
}

// NewKeyExistsError reports that key is taken.
func NewKeyExistsError(key string, rv int64) *StorageError {
	return newErr(ErrCodeKeyExists, key, rv, "")
}

// NewConflictError reports a failed precondition or stale resourceVersion.
func NewConflictError(key string, rv int64, msg string) *StorageError {
	return newErr(ErrCodeResourceVersionConflicts, key, rv, msg)
}

// NewInvalidObjError reports an object that cannot be stored as given.
func NewInvalidObjError(key, msg string) *StorageError {
	return newErr(ErrCodeInvalidObj, key, 0, msg)
}

// NewUnreachableError reports that the backend did not answer.
func NewUnreachableError(key string, err error) *StorageError {
	e := newErr(ErrCodeUnreachable, key, 0, "")
	e.Err = err
	return e
}

// NewCorruptObjError reports a stored value that does not decode.
func NewCorruptObjError(key string, err error) *StorageError {
	e := newErr(ErrCodeCorruptObj, key, 0, "")
	e.Err = err
	return e
}

func hasCode(err error, code ErrorCode) bool {
	var se *StorageError
	return errors.As(err, &se) && se.Code == code
}

// IsNotFound reports a missing key.
func IsNotFound(err error) bool { return hasCode(err, ErrCodeKeyNotFound) }

// IsExist reports a taken key.
func IsExist(err error) bool { return hasCode(err, ErrCodeKeyExists) }

// IsConflict reports a failed precondition.
func IsConflict(err error) bool { return hasCode(err, ErrCodeResourceVersionConflicts) }

// IsInvalidObj reports an object that cannot be stored.
func IsInvalidObj(err error) bool { return hasCode(err, ErrCodeInvalidObj) }

// IsUnreachable reports a backend failure.
func IsUnreachable(err error) bool { return hasCode(err, ErrCodeUnreachable) }
